"""``python -m stackcheck`` runs the CLI."""

from stackcheck.cli import main

if __name__ == "__main__":
    main()
