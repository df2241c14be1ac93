import unittest

from gradescope_utils.autograder_utils.decorators import visibility, weight


class TestTemps(unittest.TestCase):
    def setUp(self):
        import temps
        self.t = temps

    @weight(3)
    def test_freezing(self):
        """0 C is 32 F"""
        self.assertAlmostEqual(self.t.c_to_f(0), 32.0)

    @weight(3)
    def test_boiling(self):
        """100 C is 212 F"""
        self.assertAlmostEqual(self.t.c_to_f(100), 212.0)

    @weight(2)
    def test_back(self):
        """-40 F is -40 C"""
        self.assertAlmostEqual(self.t.f_to_c(-40), -40.0)

    @weight(2)
    @visibility("after_due_date")
    def test_mean(self):
        """the mean of a week"""
        self.assertAlmostEqual(self.t.mean([1, 2, 3, 4, 5, 6, 7]), 4.0)
