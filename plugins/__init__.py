"""Built-in hrr plugins; each is found through the hrr.plugins entry-point group."""
