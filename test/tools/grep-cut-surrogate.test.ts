/**
 * Lines grep shows are cut on a code-point boundary: a cut in the middle of a surrogate pair would
 * leave a lone surrogate, which the provider refuses (400) and which failed the run (issue 44).
 */
import { createDefaultRegistry } from '../../src/tools';
import { GREP_MAX_LINE_CHARS } from '../../src/tools/grep';
import { makeContext, makeTempDir, writeTree } from './helpers';

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test('a long matching line cut by grep never ends in half a surrogate pair', async () => {
  const { dir, cleanup } = makeTempDir('da-grep-cut-');
  try {
    // The cut falls between the two halves of 😀 (an astral character: two UTF-16 units).
    const line = `needle${'a'.repeat(GREP_MAX_LINE_CHARS - 7)}😀${'b'.repeat(100)}`;
    const huge = `needle${'a'.repeat(GREP_MAX_LINE_CHARS * 5 - 7)}😀${'b'.repeat(100)}`;
    writeTree(dir, { 'a.txt': `${line}\n`, 'b.txt': `${huge}\n` });
    const result = await createDefaultRegistry().run(
      'grep',
      { pattern: 'needle', output_mode: 'content' },
      makeContext(dir),
    );
    const text = String(result.content);
    expect(text).toContain('a.txt:1:needle');
    expect(text).not.toMatch(loneSurrogate);
  } finally {
    cleanup();
  }
});
