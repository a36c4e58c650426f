"""Safety before and after generation: red-flag routing and the input and output guards."""
