"""`python main.py` opens the interactive menu (the same as `llm-sim` with no arguments)."""

from simulator.cli.main import main

if __name__ == "__main__":
    main()
