"""Fixtures for the GUI tests: real embedded tokenizers, a window with settings in tmp_path."""

from __future__ import annotations

import pytest

from tokviz.resources import resource_path


def bundle_path(rel: str):  # noqa: ANN201 - the embedded (gzip) copy that the app itself ships
    return resource_path("bundles", *(rel + ".gz").split("/"))


@pytest.fixture(scope="session")
def gpt2():
    import tokviz

    return tokviz.load(bundle_path("gpt2/r50k_base.tiktoken"))


@pytest.fixture(scope="session")
def cl100k():
    import tokviz

    return tokviz.load(bundle_path("cl100k_base/cl100k_base.tiktoken"))


def wait_encoded(qtbot, vm, timeout: int = 20000) -> None:  # noqa: ANN001
    """Wait until the view-model shows the encoding of its current text and is idle."""
    qtbot.waitUntil(
        lambda: vm.update is not None and vm.update.encoding.text == vm.text and not vm.is_busy(), timeout=timeout
    )


@pytest.fixture
def encoded():  # noqa: ANN201
    """``encoded(qtbot, vm)`` waits for the encoding of the view-model's current text."""
    return wait_encoded


@pytest.fixture
def settings(tmp_path):  # noqa: ANN001, ANN201
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "tokviz.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings, gpt2):  # noqa: ANN001, ANN201
    from tokviz.gui.main_window import MainWindow

    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    w.vm.set_text("Hello world! 你好 🙂\n  def f(x): return 42\n", from_editor=False)
    w.vm.set_tokenizer(gpt2, name="gpt2")
    wait_encoded(qtbot, w.vm)
    return w



@pytest.fixture(scope="session", autouse=True)
def _clipboard_cleared_at_exit():  # noqa: ANN202
    """The clipboard tests leave a QMimeData made in Python on the clipboard; Qt deletes it while
    the interpreter shuts down, after its wrapper is gone (a segfault at exit). Clear it while the
    interpreter is still whole."""
    yield
    from PySide6.QtGui import QGuiApplication

    if QGuiApplication.instance() is not None:
        QGuiApplication.clipboard().clear()
        QGuiApplication.processEvents()


@pytest.fixture(scope="session", autouse=True)
def _earlier_objects_frozen():  # noqa: ANN202
    """The GUI tests run after the analysis, engine and fuzz tests, whose session objects (whole
    vocabularies, audits, caches) fill gigabytes; every cyclic-GC pass of a GUI job walked them
    all. Freeze what exists now (gc.freeze: left out of collections), as a long-running app's
    heap would not hold them."""
    import gc

    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _nothing_left_running(qapp):  # noqa: ANN001, ANN202
    """A test's windows die in its own teardown, after its jobs: pytest-qt closes them and calls
    deleteLater, which otherwise runs inside the next test's first wait, beside jobs still running
    for the closed window. Wait for the thread pool, then flush the deferred deletes here."""
    yield
    from PySide6.QtCore import QCoreApplication, QEvent, QThreadPool

    assert QThreadPool.globalInstance().waitForDone(120_000), "a background job ran past the test by 2 minutes"
    QCoreApplication.processEvents()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
