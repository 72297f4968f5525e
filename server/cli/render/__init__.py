"""How results are shown to a person: hits as readable blocks, explain figures as tables."""
