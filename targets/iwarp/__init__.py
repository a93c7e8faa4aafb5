"""iWarp (001_569dde0e56ec3e6f.txt): the wormhole torus, its phased AAPC and baselines."""
