import { ReceiptError } from '@mrtr/receipt';
import { type CallToolResult, textResult } from '@mrtr/wire';
import { ExecutorRefusal } from './executor.js';

/**
 * Run the executor; its refusal (of the receipt, or of a target that is not
 * what the receipt approved) becomes an error result that says nothing was
 * deleted. A store or key failure is thrown: the gate rolls back its claim.
 */
export async function execute<T>(
  run: () => Promise<T>,
): Promise<{ outcome: T; refused?: undefined } | { refused: CallToolResult }> {
  try {
    return { outcome: await run() };
  } catch (error) {
    if (error instanceof ExecutorRefusal)
      return { refused: textResult(`${error.message} Nothing was deleted.`, { isError: true }) };
    if (
      error instanceof ReceiptError &&
      error.code !== 'store_unavailable' &&
      error.code !== 'keys_unavailable'
    )
      return {
        refused: textResult(
          `The executor refused the approval receipt: ${error.message}. Nothing was deleted.`,
          { isError: true },
        ),
      };
    throw error;
  }
}
