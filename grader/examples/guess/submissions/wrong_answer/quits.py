# Leaves without asking anything.
