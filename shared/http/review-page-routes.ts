import { Hono } from "hono";
import { REVIEW_HEADERS, REVIEW_HTML, REVIEW_SCRIPT, REVIEW_STYLE } from "#review/page.ts";
import { REVIEW_PAGE_PATHS } from "#runtime/settings.ts";

/** The review page's static files (no memory in them; the page calls the API with the reviewer's token). */
export function reviewPageRoutes() {
  return new Hono()
    .get(REVIEW_PAGE_PATHS.page, (c) => c.html(REVIEW_HTML, 200, REVIEW_HEADERS))
    .get(REVIEW_PAGE_PATHS.script, (c) =>
      c.body(REVIEW_SCRIPT, 200, { ...REVIEW_HEADERS, "content-type": "text/javascript; charset=utf-8" }),
    )
    .get(REVIEW_PAGE_PATHS.style, (c) =>
      c.body(REVIEW_STYLE, 200, { ...REVIEW_HEADERS, "content-type": "text/css; charset=utf-8" }),
    );
}
