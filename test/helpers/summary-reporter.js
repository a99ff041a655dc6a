// Prints the run's totals as one plain line ("N passed, N failed, N skipped") for CI logs, after the slowest test
// files (the suite must stay well under 20 minutes: this says where the time goes).
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const files = results.testResults
      .map((r) => ({ path: r.testFilePath.replace(`${process.cwd()}/`, ''), ms: r.perfStats.end - r.perfStats.start }))
      .sort((a, b) => b.ms - a.ms);
    const total = files.reduce((sum, f) => sum + f.ms, 0);
    const slowest = files
      .slice(0, 12)
      .map((f) => `  ${(f.ms / 1000).toFixed(1).padStart(6)} s  ${f.path}`)
      .join('\n');
    process.stdout.write(
      `\nslowest test files (of ${files.length}, ${(total / 1000).toFixed(0)} s in all):\n${slowest}\n` +
        `\n${results.numPassedTests} passed, ${results.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
module.exports = SummaryReporter;
