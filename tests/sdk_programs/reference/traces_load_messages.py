# SDK reference: traces load messages
import json
from pathlib import Path

import whileai as wai

rec = {"messages": [{"role": "user", "content": "Where is A1?"}, {"role": "assistant", "content": "Shipped."}]}
Path("chat.jsonl").write_text(json.dumps(rec) + "\n")
rows = wai.traces.load("chat.jsonl")
assert len(rows) == 1 and rows[0]["final_text"] == "Shipped."
