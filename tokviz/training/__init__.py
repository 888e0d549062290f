"""Trainers (BPE, WordPiece, Unigram) as cancellable generators of events."""
