"""The model's side of state consistency (BAR module b): scoring a plan's steps and repairing a window forward
(:mod:`.forward_repairer`)."""
