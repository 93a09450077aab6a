# Drop training rows that overlap the eval set.
import whileai as wai

train = wai.rows(["Where is order A1001 right now please tell me the status of it today",
                  "Cancel my subscription to the weekly newsletter before the renewal date"],
                 ["It shipped.", "Cancelled."])
evals = wai.rows(["Where is order A1001 right now please tell me the status of it today"], ["It shipped."])
report = wai.decontaminate(train, evals, n=8)
print(report)
