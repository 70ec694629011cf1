"""Service layer: the mail algorithms, written against the protocol layer's session interface."""
