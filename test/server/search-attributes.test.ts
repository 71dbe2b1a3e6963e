import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection } from '@temporalio/worker';
import { ensureSearchAttributes } from '../../src/server/search-attributes';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../../src/shared';
import { testAddress } from '../support/temporal';

test('a worker registers the search attributes a namespace lacks, once', async () => {
  const connection = await NativeConnection.connect({ address: testAddress() });
  try {
    const namespace = `sa-${Date.now()}`;
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    // Namespace creation propagates asynchronously; retry until the operator API knows it.
    let added: string[] | undefined;
    for (let i = 0; i < 50 && added === undefined; i++) {
      added = await ensureSearchAttributes(connection.operatorService, namespace).catch(async () => {
        await new Promise((r) => setTimeout(r, 200));
        return undefined;
      });
    }
    expect(added?.sort()).toEqual(SEARCH_ATTRIBUTE_DEFINITIONS.map((d) => d.name).sort());
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    for (const { name } of SEARCH_ATTRIBUTE_DEFINITIONS) expect(customAttributes).toHaveProperty(name);
    expect(await ensureSearchAttributes(connection.operatorService, namespace)).toEqual([]);
  } finally {
    await connection.close();
  }
});
