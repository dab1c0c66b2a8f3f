// A vitest reporter that repeats, after everything else, what went wrong: each failed test with its first
// error, and each unhandled error with its stack. CI keeps only the tail of a run's output, and the default
// reporter prints these above its summary, where the tail cuts them off.
const MAX_LINES = 12;
const MAX_CHARS = 2000;

/**
 * The message and the stack frames in our own code (vitest's and node's own frames say nothing here), at most
 * MAX_LINES lines and MAX_CHARS characters: a carriage return breaks a line too (a program's status line
 * redrawn in place, kept in a message, was one "line" of thousands of characters that filled CI's tail).
 */
const head = (text) => {
  const kept = String(text ?? '')
    .split(/\r\n|\r|\n/)
    .filter((line) => !/^\s+at .*(node_modules|node:internal|\(<anonymous>\))/.test(line))
    .slice(0, MAX_LINES)
    .join('\n');
  return kept.length > MAX_CHARS ? `${kept.slice(0, MAX_CHARS)} …` : kept;
};

const describeError = (e) => head(e?.stack || e?.message || (typeof e === 'object' ? JSON.stringify(e) : e));

function* failedTests(task, trail = []) {
  const name = [...trail, task.name];
  if (task.type === 'test' && task.result?.state === 'fail') yield { name, errors: task.result.errors ?? [] };
  for (const child of task.tasks ?? []) yield* failedTests(child, task.type === 'suite' ? name : trail);
}

export default class FailuresReporter {
  onFinished(files = [], errors = []) {
    const lines = [];
    for (const file of files) {
      if (file.result?.state === 'fail' && file.result.errors?.length)
        lines.push(`✗ ${file.filepath} (the file failed)\n${describeError(file.result.errors[0])}`);
      for (const child of file.tasks ?? [])
        for (const t of failedTests(child))
          lines.push(`✗ ${file.name} › ${t.name.join(' › ')}\n${describeError(t.errors[0])}`);
    }
    for (const e of errors)
      lines.push(
        `✗ unhandled error${e?.VITEST_TEST_PATH ? ` in ${e.VITEST_TEST_PATH}` : ''}\n${describeError(e)}`,
      );
    if (lines.length) console.log(`\n== what failed, again\n${lines.join('\n\n')}`);
  }
}
