"""What the evaluation services share: the purpose of their LLM runs and the item kinds scored objectively."""

EVALUATION_PURPOSE = "evaluation"
OBJECTIVE = ("mcq", "multi_turn_choice")
