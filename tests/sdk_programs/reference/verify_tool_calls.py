# SDK reference: verify tool calls
import whileai as wai

msg = {"role": "assistant", "tool_calls": [{"id": "1", "type": "function", "function": {"name": "get_order", "arguments": "{\"order_id\": \"A1\"}"}}]}
calls = wai.verify.tool_calls({"messages": [msg]})
assert calls[0].name == "get_order" and calls[0].arguments == {"order_id": "A1"}
