# Forgets punctuation and ties: 6 of 10 points.
from collections import Counter


def top_words(text, n):
    return Counter(text.lower().split()).most_common(n)
