// The repository stands alone: a user who clones it can open everything its code, pages and documents cite. Every
// tracked text file (lock files and docs/notes/ aside) is scanned for references to files that live outside the
// repository, for issue-tracker numbers, and for citations of docs/api-contract.md sections or docs/architecture.md
// sections that do not exist. Cheap: one `git ls-files` and a few regular expressions, no server or database.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../..");
const CONTRACT = "docs/api-contract.md";
const ARCHITECTURE = "docs/architecture.md";

const LOCK_FILES = new Set(["package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb"]);

/** Tracked files the scan covers: every text file except lock files and the helpers' working notes. */
function scannedFiles(): Array<{ file: string; text: string }> {
  const listed = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0");
  const files: Array<{ file: string; text: string }> = [];
  for (const file of listed) {
    if (!file || file.startsWith("docs/notes/") || file.split("/").includes("node_modules")) continue;
    if (LOCK_FILES.has(path.basename(file)) || file.endsWith(".lock")) continue;
    const full = path.join(root, file);
    // A tracked file deleted in the working tree is not part of what a user gets.
    if (!existsSync(full)) continue;
    const text = readFileSync(full, "utf8");
    if (text.includes("\0")) continue;
    files.push({ file, text });
  }
  return files;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

// Between the parts of one citation a comment may wrap: white space, `*` of a block comment, `//` of a line comment.
const WRAP = String.raw`[\s*/]*`;

/** What must not appear anywhere, with the reason shown for each hit. */
const FORBIDDEN: ReadonlyArray<{ pattern: RegExp; why: string }> = [
  { pattern: /\.\.\/shared\b/g, why: "a path outside the repository" },
  { pattern: /\bDESIGN\.md\b/g, why: "the starting design is not in the repository: cite docs/architecture.md" },
  { pattern: /\bissues?\s*#\d+|\bissues\s+#/gi, why: "an issue number users cannot open" },
  { pattern: /\(#\d+\)/g, why: "an issue number users cannot open" },
  {
    pattern: new RegExp(String.raw`\bspec${WRAP}§\s*\d`, "gi"),
    why: "the original specification is not in the repository: cite docs/api-contract.md §N",
  },
];

/** Numbered sections of the contract page: `## §4`, `### §4.9`, `#### §4.9.3 …` → "4", "4.9", "4.9.3". */
function contractSections(): Set<string> {
  const text = readFileSync(path.join(root, CONTRACT), "utf8");
  return new Set([...text.matchAll(/^#{1,6}\s+§(\d+(?:\.\d+)*)\b/gm)].map((match) => match[1] as string));
}

/** Section titles of the architecture record: its `## ` headings. */
function architectureSections(): Set<string> {
  const text = readFileSync(path.join(root, ARCHITECTURE), "utf8");
  return new Set([...text.matchAll(/^##\s+(.+?)\s*$/gm)].map((match) => match[1] as string));
}

// `docs/api-contract.md §4.3`, also `… §5.1–5.4` and `… §3, §6.1 and §6.2`: every number must be a section.
const CONTRACT_CITATION = new RegExp(
  String.raw`docs/api-contract\.md((?:${WRAP}(?:,|;|and|or)?${WRAP}§\s*\d+(?:\.\d+)*(?:\s*[–-]\s*\d+(?:\.\d+)*)?)+)`,
  "g",
);
// `docs/architecture.md, "Idempotency"` (straight or curly quotes).
const ARCHITECTURE_CITATION = new RegExp(String.raw`docs/architecture\.md,?${WRAP}["“]([^"”\n]+)["”]`, "g");
// Any document under docs/ named by path.
const DOCS_PATH = /\bdocs\/[A-Za-z0-9_./-]+\.md\b/g;

describe("the repository stands alone", () => {
  const files = scannedFiles();
  const tracked = new Set(execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8" }).split("\0"));

  it("scans the tree (the contract page and the architecture record are part of it)", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.map(({ file }) => file)).toEqual(expect.arrayContaining([CONTRACT, ARCHITECTURE, "README.md"]));
  });

  it("cites no file outside the repository, no original specification section and no issue number", () => {
    const hits: string[] = [];
    for (const { file, text } of files) {
      for (const { pattern, why } of FORBIDDEN) {
        for (const match of text.matchAll(pattern)) {
          hits.push(`${file}:${lineOf(text, match.index)}: ${JSON.stringify(match[0])}: ${why}`);
        }
      }
    }
    expect(hits).toEqual([]);
  });

  it(`cites only sections that exist in ${CONTRACT}`, () => {
    const sections = contractSections();
    expect(sections.size).toBeGreaterThan(40);
    const hits: string[] = [];
    for (const { file, text } of files) {
      for (const match of text.matchAll(CONTRACT_CITATION)) {
        for (const number of (match[1] as string).matchAll(/\d+(?:\.\d+)*/g)) {
          if (!sections.has(number[0])) {
            hits.push(`${file}:${lineOf(text, match.index)}: §${number[0]} is not a section of ${CONTRACT}`);
          }
        }
      }
    }
    expect(hits).toEqual([]);
  });

  it(`cites only sections that exist in ${ARCHITECTURE}`, () => {
    const sections = architectureSections();
    expect(sections.size).toBeGreaterThanOrEqual(14);
    const hits: string[] = [];
    for (const { file, text } of files) {
      for (const match of text.matchAll(ARCHITECTURE_CITATION)) {
        const title = (match[1] as string).replace(/\s+/g, " ").trim();
        if (!sections.has(title)) {
          hits.push(`${file}:${lineOf(text, match.index)}: "${title}" is not a section of ${ARCHITECTURE}`);
        }
      }
    }
    expect(hits).toEqual([]);
  });

  it("names only documents under docs/ that the repository has", () => {
    const hits: string[] = [];
    for (const { file, text } of files) {
      for (const match of text.matchAll(DOCS_PATH)) {
        // A path inside a URL or a longer path (`app/docs/…`) is not a repository document.
        const before = text[match.index - 1] ?? "";
        if (/[A-Za-z0-9_/.-]/.test(before)) continue;
        if (!tracked.has(match[0]) && !match[0].startsWith("docs/notes/")) {
          hits.push(`${file}:${lineOf(text, match.index)}: ${match[0]} is not in the repository`);
        }
      }
    }
    expect(hits).toEqual([]);
  });
});
