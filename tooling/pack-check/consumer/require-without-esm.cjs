// Run with --no-experimental-require-module: Node before 20.19 (and 22.0 to
// 22.11) cannot require() an ES module. Every package whose engines admit
// such a Node must load there. Names come as arguments.
const failed = [];
for (const name of process.argv.slice(2)) {
  try {
    require(name);
  } catch (error) {
    failed.push(`${name}: ${error.code ?? ''} ${String(error.message).split('\n')[0]}`);
  }
}
if (failed.length > 0) {
  console.error(
    `engines admit a Node without require(esm), but these CommonJS builds need it:\n  ${failed.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`loaded without require(esm): ${process.argv.slice(2).join(', ')}`);
