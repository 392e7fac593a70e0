"""The verbs' typer faces: each module holds one command and calls into its package."""
