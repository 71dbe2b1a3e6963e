import { DefaultFailureConverter } from '@temporalio/common';

/**
 * Moves failure messages and stack traces into the failure's `encodedAttributes` payload, which the
 * payload codec then encrypts (a failure's message is otherwise plaintext in history). Loaded by path
 * (`DataConverter.failureConverterPath`): the worker bundles it into the workflow sandbox too, so it
 * imports nothing but `@temporalio/common`.
 */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
