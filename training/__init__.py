"""Training the referee's models on synthetic renders. The runtime never imports this."""
