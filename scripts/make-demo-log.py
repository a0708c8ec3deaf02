"""Builds examples/demo/events.jsonl, the log `npm start` ingests.

A designed core of multi-project memory (numbers with units, negations, a supersession, conflicting
decisions, open tasks, permissions, English and Chinese free text) interleaved with everyday chat
from the MemoryBank evaluation data (MIT, see examples/demo/SOURCE.md) as low-value notes.
Run from the repository root with the kit beside it: python3 scripts/make-demo-log.py
"""
import json

CORE = [
    {"eventId": "alpha-1", "kind": "fact", "text": "Project alpha's budget is 12,500 USD.", "assertions": [{"key": "project:alpha/budget", "value": {"quantity": "12500.00", "unit": "USD"}, "polarity": "affirmed", "scope": "project:alpha"}], "source": "agent:planner"},
    {"eventId": "alpha-2", "kind": "constraint", "text": "Never use vendor X for alpha.", "assertions": [{"key": "project:alpha/vendor", "value": {"entity": "vendor:x"}, "polarity": "negated", "scope": "project:alpha"}]},
    {"eventId": "alpha-3", "kind": "decision", "text": "Launch alpha on 2026-12-03.", "assertions": [{"key": "project:alpha/launch", "value": {"date": "2026-12-03"}, "polarity": "affirmed", "scope": "project:alpha"}], "source": "agent:planner"},
    {"eventId": "alpha-4", "kind": "decision", "text": "Sam wants the alpha launch on 2026-12-10 instead.", "assertions": [{"key": "project:alpha/launch", "value": {"date": "2026-12-10"}, "polarity": "affirmed", "scope": "project:alpha"}], "source": "user:sam"},
    {"eventId": "alpha-5", "kind": "permission", "text": "The deploy bot may read and write repo alpha.", "assertions": [{"key": "agent:deploy-bot/access", "value": {"scopes": ["repo:alpha:read", "repo:alpha:write"]}, "polarity": "affirmed", "scope": "project:alpha"}]},
    {"eventId": "alpha-6", "kind": "task", "text": "Send invoice INV-20931 to the client by Dec 5, 2026."},
    {"eventId": "alpha-7", "kind": "preference", "text": "Alex prefers dark mode when working on alpha.", "assertions": [{"key": "ui/theme", "value": {"text": "dark"}, "polarity": "affirmed", "scope": "project:alpha"}]},
    {"eventId": "beta-1", "kind": "fact", "text": "Project beta's budget is 8,000 EUR.", "assertions": [{"key": "project:beta/budget", "value": {"quantity": "8000", "unit": "EUR"}, "polarity": "affirmed", "scope": "project:beta"}]},
    {"eventId": "beta-2", "kind": "fact", "text": "After the review, project beta's budget is 9,000 EUR.", "supersedes": ["beta-1"], "assertions": [{"key": "project:beta/budget", "value": {"quantity": "9000", "unit": "EUR"}, "polarity": "affirmed", "scope": "project:beta"}]},
    {"eventId": "beta-3", "kind": "constraint", "text": "预算不要超过9000欧元，3天内给出答复。"},
    {"eventId": "beta-4", "kind": "task", "text": "Book the beta venue.", "taskStatus": "done"},
    {"eventId": "beta-5", "kind": "task", "text": "Review the beta contract draft v2 before 2026-12-08."},
    {"eventId": "health-1", "kind": "fact", "text": "Alex's daily run limit is 5 km.", "assertions": [{"key": "user:alex/run-limit", "value": {"quantity": "5", "unit": "km"}, "polarity": "affirmed"}]},
    {"eventId": "health-2", "kind": "preference", "text": "Alex doesn't want meetings on Fridays."},
    {"eventId": "health-3", "kind": "fact", "text": "The office wifi password rotates every 30 days.", "trust": "untrusted", "source": "web:forum"},
    {"eventId": "ops-1", "kind": "fact", "text": "Backups keep 90 days of snapshots, about 2 TB.", "assertions": [{"key": "ops/backup-retention", "value": {"quantity": "90", "unit": "day"}, "polarity": "affirmed"}, {"key": "ops/backup-size", "value": {"quantity": "2", "unit": "TB"}, "polarity": "affirmed"}]},
    {"eventId": "ops-2", "kind": "constraint", "text": "Do not deploy on weekends.", "assertions": [{"key": "ops/weekend-deploys", "value": {"bool": True}, "polarity": "negated"}]},
    {"eventId": "ops-3", "kind": "task", "text": "Rotate the API key for the billing service by 2026-12-15."},
]

data = json.load(open("../shared/data/memorybank/memory_bank_en.json"))
chat = []
for user in ["Emily", "Frank", "Lucy", "Sunny", " Jason ", " Linda"]:
    for day, turns in data[user]["history"].items():
        for turn in turns:
            chat.append({"user": user, "day": day, "text": turn["query"]})

events = []
core = iter(CORE)
for index, turn in enumerate(chat):
    events.append({"eventId": f"chat-{index + 1}", "kind": "note", "text": turn["text"][:2000], "source": f"user:{turn['user'].strip().lower()}", "occurredAt": f"{turn['day']}T12:00:00Z"})
    if index % 10 == 5:
        nxt = next(core, None)
        if nxt:
            events.append(nxt)
events.extend(core)

with open("examples/demo/events.jsonl", "w") as out:
    for event in events:
        out.write(json.dumps(event, ensure_ascii=False) + "\n")
print(f"{len(events)} events")
