/** Types of the small text libraries the gate's text support uses (they ship none). */
declare module "stopwords-iso" {
  const stopwords: Record<string, string[]>;
  export default stopwords;
}
declare module "wink-lemmatizer" {
  const lemmatizer: {
    noun(word: string): string;
    verb(word: string): string;
    adjective(word: string): string;
  };
  export default lemmatizer;
}
declare module "wink-porter2-stemmer" {
  const stem: (word: string) => string;
  export default stem;
}
declare module "stopword" {
  /** English stopwords (108 words). */
  export const eng: string[];
  /** Chinese stopwords (single characters). */
  export const zho: string[];
}
