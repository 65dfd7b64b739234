# SPDX-License-Identifier: GPL-2.0
# Package marker so that "python3 -m unittest discover -s tools" finds
# test_flashcard.py. The nbdkit plugin itself is flashcard.py.
