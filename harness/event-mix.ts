// The event mix the consolidation benchmarks and the cost fuzz append: facts on a pool of keys,
// decisions, constraints with negations, tasks and notes, by index (the same log every run).

/** A realistic mix: facts on a pool of keys, decisions, constraints with negations, tasks, notes. */
export function realisticEvent(i: number): Record<string, unknown> {
  const project = `p${i % 40}`;
  switch (i % 10) {
    case 0:
    case 1:
    case 2:
      return { eventId: `e-${i}`, kind: "note", text: `Chatted about topic ${i % 97} with the team.` };
    case 3:
      return {
        eventId: `e-${i}`,
        kind: "task",
        text: `Follow up on ticket T-${i} by 2026-12-${String((i % 28) + 1).padStart(2, "0")}.`,
        taskStatus: i % 3 === 0 ? "open" : "done",
      };
    case 4:
      return {
        eventId: `e-${i}`,
        kind: "constraint",
        text: `Never exceed ${i % 50} km for project ${project}.`,
        assertions: [
          {
            key: `project:${project}/limit-${i}`,
            value: { quantity: String(i % 50), unit: "km" },
            polarity: "negated",
            scope: `project:${project}`,
          },
        ],
      };
    default:
      return {
        eventId: `e-${i}`,
        kind: i % 10 === 9 ? "decision" : "fact",
        text: `Item ${i} of ${project} costs ${i} USD.`,
        assertions: [
          {
            key: `project:${project}/item-${i}`,
            value: { quantity: `${i}.00`, unit: "USD" },
            polarity: "affirmed",
            scope: `project:${project}`,
          },
        ],
      };
  }
}
