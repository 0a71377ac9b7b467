"""Reading archives for people: streaming dump, timeline export, diff."""
