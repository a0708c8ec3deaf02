import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_SEARCH_TERMS, SearchIndex } from "#domain/search-index.ts";
import { dayWords, searchTerms } from "#domain/search-terms.ts";

describe("search terms: a question and an event read alike", () => {
  it.each([
    ["When did Audrey's dog go to the vet?", ["when", "audrey", "dog", "go", "vet"]],
    ["Jon went dancing; he goes dancing every week", ["jon", "go", "danc", "go", "danc", "everi", "week"]],
    ["She PAINTED two paintings", ["she", "paint", "two", "paint"]],
    ["I don't eat peanuts", ["dont", "eat", "peanut"]],
    ["Budget is 12,500 USD", ["budget", "12", "500", "usd"]],
  ])("%s", (text, terms) => {
    expect(searchTerms(text)).toEqual(terms);
  });

  it("reads Han text as character pairs, however a segmenter would cut it", () => {
    expect(searchTerms("晓雯的生日")).toEqual(["晓雯", "雯的", "的生", "生日"]);
    // A lone character is kept unless it is a stopword.
    expect(searchTerms("猫 的")).toEqual(["猫"]);
    // Digits beside Han characters are words of their own.
    expect(searchTerms("8月11日")).toEqual(["8", "11"]);
    // A restatement using the same characters in the same order shares its pairs.
    const source = new Set(searchTerms("晓雯有急事，周五不能来"));
    for (const pair of searchTerms("晓雯急事")) if (pair !== "雯急") expect(source.has(pair)).toBe(true);
  });

  it("is NFKC and case-insensitive", () => {
    expect(searchTerms("ＰＯＴＴＥＲＹ Class")).toEqual(searchTerms("pottery class"));
  });
});

describe("the words of a day", () => {
  it("names an occurredAt's year, month by name and number, day of the month and weekday", () => {
    expect(dayWords("2023-08-11T13:56:00")).toBe("2023 august 8 11 friday 星期五");
    expect(dayWords("2023-05-07")).toBe("2023 may 5 7 sunday 星期日 星期天");
    expect(dayWords("2024-02-29T09:00:00+08:00")).toBe("2024 february 2 29 thursday 星期四");
  });

  it("is empty for what is no calendar day", () => {
    expect(dayWords("2023-02-30")).toBe("");
    expect(dayWords("yesterday")).toBe("");
    expect(dayWords("")).toBe("");
  });

  it("meets a question naming the day in words, in English and in Chinese", () => {
    const day = new Set(searchTerms(dayWords("2023-08-11")));
    for (const question of ["What did John do on August 11, 2023?", "8月11日约翰做了什么？", "星期五"])
      expect(searchTerms(question).some((term) => day.has(term))).toBe(true);
  });
});

const documents = [
  {
    id: "d1",
    fields: { text: "Lost my job as a banker yesterday, so I'm starting my own business.", source: "Jon" },
  },
  { id: "d2", fields: { text: "I also lost my job at Door Dash this month.", source: "Gina" } },
  { id: "d3", fields: { text: "Dancing is how I destress.", source: "Jon", context: "How do you relax?" } },
  { id: "d4", fields: { text: "The studio will have Marley flooring.", source: "Jon" } },
  { id: "d5", fields: { text: "What business are you thinking of?", source: "Gina" } },
];

describe("ranked search (BM25+, words combined with OR)", () => {
  const index = SearchIndex.build(documents);

  it("finds the events a question is about although they hold only some of its words", () => {
    const hits = index.search("When Jon has lost his job as a banker?", 10).map((hit) => hit.id);
    expect(hits[0]).toBe("d1");
    expect(hits).toContain("d2");
  });

  it("weighs who wrote an event: a question naming Gina ranks her lost job first", () => {
    expect(index.search("When did Gina lose her job?", 10)[0]?.id).toBe("d2");
  });

  it("reads the events around an event as its context", () => {
    expect(index.search("How does Jon relax?", 10)[0]?.id).toBe("d3");
  });

  it("answers nothing for words no document holds, and keeps equal scores in document order", () => {
    expect(index.search("kubernetes", 10)).toEqual([]);
    const twins = SearchIndex.build([
      { id: "b", fields: { text: "same words" } },
      { id: "a", fields: { text: "same words" } },
    ]);
    expect(twins.search("words", 10).map((hit) => hit.id)).toEqual(["b", "a"]);
  });

  it("cuts a long question to its most informative terms (the rarest), never refusing it", () => {
    const many = SearchIndex.build(
      Array.from({ length: 40 }, (_, i) => ({
        id: `e${i}`,
        // Each filler word in 4 documents, rareword in 2, common in all, frequent in 38.
        fields: { text: `common filler${i % 10} filler${10 + (i % 10)} ${i < 2 ? "rareword" : "frequent"}` },
      })),
    );
    const question = `common frequent ${Array.from({ length: 20 }, (_, i) => `filler${i}`).join(" ")} rareword`;
    const terms = many.queryTerms(question);
    expect(terms).toHaveLength(MAX_SEARCH_TERMS);
    expect(terms).toContain("rareword");
    expect(terms).not.toContain("common");
    expect(terms).not.toContain("frequent");
  });

  it("ranks the same way when loaded from its parts, for any documents and query", () => {
    const word = fc.constantFrom(
      "tea",
      "shop",
      "green",
      "opens",
      "nine",
      "dog",
      "vet",
      "Jon",
      "晓雯",
      "生日",
    );
    const doc = fc.array(word, { minLength: 1, maxLength: 8 }).map((words) => words.join(" "));
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 1, maxLength: 12 }),
        fc.array(word, { maxLength: 6 }),
        (texts, query) => {
          const built = SearchIndex.build(texts.map((text, i) => ({ id: `x${i}`, fields: { text } })));
          const parts = built.toParts();
          const loaded = SearchIndex.fromParts({
            ...parts,
            lengths: Int32Array.from(parts.lengths),
            offsets: Int32Array.from(parts.offsets),
            postings: Int32Array.from(parts.postings),
          });
          const hits = built.search(query.join(" "), 5);
          expect(loaded.search(query.join(" "), 5)).toEqual(hits);
          const all = built.search(query.join(" "), 1000);
          expect(hits).toEqual(all.slice(0, 5));
          for (let i = 1; i < all.length; i++)
            expect((all[i - 1]?.score ?? 0) >= (all[i]?.score ?? 0)).toBe(true);
        },
      ),
      { numRuns: 200, seed: 37 },
    );
  });
  it("carries nothing from one search to the next: a reused index ranks as a fresh one", () => {
    // A search reuses its working arrays; one that touched most documents clears them whole, one
    // that touched few clears its own entries. Either way the next search starts from nothing.
    const word = fc.constantFrom("tea", "shop", "green", "opens", "nine", "dog", "vet", "Jon");
    const doc = fc.array(word, { minLength: 1, maxLength: 6 }).map((words) => words.join(" "));
    fc.assert(
      fc.property(
        fc.array(doc, { minLength: 1, maxLength: 40 }),
        fc.array(fc.array(word, { minLength: 1, maxLength: 4 }), { minLength: 2, maxLength: 6 }),
        fc.integer({ min: 1, max: 12 }),
        (texts, queries, limit) => {
          const documents = texts.map((text, i) => ({ id: `x${i}`, fields: { text } }));
          const reused = SearchIndex.build(documents);
          for (const query of queries)
            expect(reused.search(query.join(" "), limit)).toEqual(
              SearchIndex.build(documents).search(query.join(" "), limit),
            );
        },
      ),
      { numRuns: 200, seed: 41 },
    );
  });
});

describe("a question's words that most of the index holds", () => {
  it("are not searched (this index's own stopwords), unless nothing else is left", () => {
    const index = SearchIndex.build(
      Array.from({ length: 10 }, (_, i) => ({
        id: `t${i}`,
        fields: { text: `we talked about ${i === 3 ? "kayaks" : "tea"}` },
      })),
    );
    expect(index.queryTerms("What was talked about kayaks?")).toEqual(["kayak"]);
    expect(index.search("What was talked about kayaks?", 5).map((hit) => hit.id)).toEqual(["t3"]);
    // Only common words: the rarest of them is searched.
    expect(index.queryTerms("talked tea")).toEqual(["tea"]);
    expect(index.search("talked tea", 20)).toHaveLength(9);
  });
});
