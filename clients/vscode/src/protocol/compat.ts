/* Compile-time check: what the server's schemas promise (generated types) is
 * assignable to what the client reads (hand-written types). A schema change
 * that breaks the client fails `npm run typecheck`. Add a line per schema. */
import type * as P from './types';
import type { InitializeResult } from './generated/initialize.result';
import type { ProfileOpenResult } from './generated/profile.open.result';
import type { ProgressParams } from './generated/notify.progress.params';

type Assignable<From, To> = [From] extends [To] ? true : false;

export const schemaCompat: [
  Assignable<InitializeResult, P.InitializeResult>,
  Assignable<ProfileOpenResult, P.ProfileOpenResult>,
  Assignable<ProgressParams['value'], P.WorkDoneProgress>,
] = [true, true, true];
