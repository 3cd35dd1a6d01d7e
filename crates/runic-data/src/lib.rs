//! runic-data: run-time values shared by every backend, and the text and binary value formats.
