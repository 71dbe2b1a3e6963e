/**
 * The remaining cuts of text that reaches the model (a hook's reason or context, an MCP server's tool
 * description) fall on code point boundaries: an emoji at the bound is kept whole or dropped whole.
 */
import fc from 'fast-check';
import { cut } from '../../src/hooks/verdict';
import { MAX_MCP_DESCRIPTION_CHARS, boundedDescription } from '../../src/shared/mcp';
import { isWellFormed } from '../../src/shared/well-formed';

const text = (maxLength: number) =>
  fc.array(fc.constantFrom('a', 'é', '😀', '𝄞', ' '), { maxLength }).map((parts) => parts.join(''));

test("a hook's text cut to its bound is well-formed", () => {
  fc.assert(
    fc.property(text(80), fc.integer({ min: 0, max: 100 }), (t, max) => {
      expect(isWellFormed(cut(t, max))).toBe(true);
    }),
  );
  // An emoji straddling the bound: the old cut kept its high half.
  expect(isWellFormed(cut('a😀b', 2))).toBe(true);
});

test("an MCP server's long description is cut on a code point boundary", () => {
  const description = 'a'.repeat(MAX_MCP_DESCRIPTION_CHARS - 2) + '😀'.repeat(10);
  expect(isWellFormed(boundedDescription(description))).toBe(true);
});
