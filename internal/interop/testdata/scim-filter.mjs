// Evaluates SCIM filters (RFC 7644 §3.4.2.2) with scim2-parse-filter, an implementation
// independent of authcore's, over the users of the JSON file SCIM_FILTERS names:
// { users: [...], filters: ["..."] }. Prints, for each filter, the indices of the users it
// matches, or { error } when it does not parse. One process for the whole set.
import { readFileSync } from "node:fs";
import scim from "scim2-parse-filter";

const input = JSON.parse(readFileSync(process.env.SCIM_FILTERS, "utf8"));
const out = input.filters.map((f) => {
  try {
    const test = scim.filter(scim.parse(f));
    return input.users.flatMap((u, i) => (test(u) ? [i] : []));
  } catch (e) {
    return { error: String(e) };
  }
});
process.stdout.write(JSON.stringify(out));
