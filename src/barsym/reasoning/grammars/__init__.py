"""What the model may write and how it is read: BAR's reply grammar (:mod:`.reply_grammar`) and the forward
plans' line format, grammar and parser (:mod:`.forward_plans`)."""
