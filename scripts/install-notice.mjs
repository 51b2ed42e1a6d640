// `npm ci`'s first step (package.json `preinstall`), on whatever Node runs npm and before anything is installed, hence
// plain JavaScript with no imports. On a Node outside package.json `engines.node` it says so in one line, with what the
// README's next commands do about it (scripts/node-runtime.ts), instead of npm's engine warnings, which the project's
// .npmrc hides: on Node 20 they were about 1,500 lines, one block per dependency that asks for a newer Node.
const range = process.env.npm_package_engines_node ?? "";
const [major = 0, minor = 0, patch = 0] = process.versions.node.split(".").map(Number);
// `engines.node` is a list of caret ranges ("^22.15.0 || ^24.0.0"): the same major, at least that version.
const supported = range.split("||").some((alternative) => {
  const match = /^\s*\^(\d+)\.(\d+)\.(\d+)\s*$/.exec(alternative);
  if (!match) return false;
  const [lowMajor, lowMinor, lowPatch] = match.slice(1).map(Number);
  return major === lowMajor && (minor > lowMinor || (minor === lowMinor && patch >= lowPatch));
});
// Outside npm (no range) there is nothing to compare with.
if (range && !supported)
  console.error(
    `Node ${process.versions.node} is not supported (${range}): npm run build, npm start and npm test will run on Node 24 from the npm registry.`,
  );
