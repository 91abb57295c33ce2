"""Reading a plan written in free prose into steps: the parser (:mod:`.parser`), its gaps (:mod:`.gaps`) and its
files (:mod:`.prose_io`)."""
