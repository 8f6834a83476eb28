"""The market's sample for the end-to-end checks (simulator/testing/world_sample.py): three
rounds in which the buyer offers 50 and the seller's reply holds no number (plain data)."""

EXPERIMENT_YAML = """\
kind: market
name: A bicycle for sale
llms:
- model: ollama:stub
  params:
    temperature: 1.0
    max_tokens: 32
market:
  item: a used bicycle
  rounds: 3
  buyer_start: 40
  seller_start: 100
"""
RUN_ARGS = ("--seed", "5")
REPLIES = (
    ("You are the buyer", "I offer 50 dollars."),
    ("You are the seller", "Not a cent less than my last price."),
)
ROWS = "rounds"
UNIT = ("round", "agent_index")
ROW_COUNT = 6  # 3 rounds x buyer and seller
FORK_AT = "2"
FORK_POINT = {"round": 2}
FORK_SHARED = 2  # round 1
FORK_CALLS = 4  # rounds 2 and 3
SHOW_TEXT = ("kind market: a used bicycle; buyer from 40, seller from 100",)
EXPORT_TABLES = ("market_runs",)
MEASURES = (("rounds", 3.0), ("final_gap", 50.0), ("deal", 0.0), ("fallbacks", 3.0))
REPORT_TEXT = ("Market runs",)
