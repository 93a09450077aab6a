# The SDK's decontaminate returns (clean_rows, report).
import whileai as wai

train = wai.rows(["Where is order A1001 right now please tell me the status of it today",
                  "Cancel my subscription to the weekly newsletter before the renewal date"],
                 ["It shipped.", "Cancelled."])
evals = wai.rows(["Where is order A1001 right now please tell me the status of it today"], ["It shipped."])
clean, report = wai.decontaminate(train, evals, n=8)
print(len(clean), "clean rows")
