// RepoCoder's second round (CodeRAG Table 1's iterative baseline): the retrieval paths read the
// code before the cursor with the first generation appended, while the query and the prompt keep
// the code as it is.
import type { Retriever } from '../../engine/retrieve/types';

/** `retriever` as RepoCoder's second round runs it: `generated` follows the code before the cursor. */
export function afterFirstGeneration(retriever: Retriever, generated: string): Retriever {
  if (!generated) return retriever;
  return {
    name: retriever.name,
    retrieve: (request, signal) =>
      retriever.retrieve({ ...request, file: { ...request.file, prefix: request.file.prefix + generated } }, signal),
  };
}
