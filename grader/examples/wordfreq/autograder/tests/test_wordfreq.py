import unittest

from gradescope import weight


class TestTopWords(unittest.TestCase):
    def top(self, *args):
        from wordfreq import top_words  # the student's module: an import error fails each test
        return top_words(*args)

    @weight(2)
    def test_simple(self):
        """counts words"""
        self.assertEqual(self.top("a b a", 1), [("a", 2)])

    @weight(2)
    def test_case(self):
        """ignores case"""
        self.assertEqual(self.top("The the THE cat", 1), [("the", 3)])

    @weight(2)
    def test_punctuation(self):
        """ignores punctuation"""
        self.assertEqual(self.top("cat, cat. dog!", 2), [("cat", 2), ("dog", 1)])

    @weight(2, "after_due_date")
    def test_ties(self):
        """breaks ties alphabetically"""
        self.assertEqual(self.top("b a c b a c", 3), [("a", 2), ("b", 2), ("c", 2)])

    @weight(2, "hidden")
    def test_empty(self):
        """handles empty text"""
        self.assertEqual(self.top("", 5), [])
