"""The compute node's side: an array task grading its shard, a pilot taking tickets."""
