import type { Json } from '@mrtr/replay';
import type { TicketClaims } from '@mrtr/ticket';
import type {
  CallToolResult,
  ClientCapabilities,
  Implementation,
  RequestedSchema,
} from '@mrtr/wire';
import type { ConfirmationLevel } from './approval.js';

/**
 * What the gate needs to know about the request it guards. `@mrtr/server`'s
 * request context satisfies it; any other server can build one.
 */
export interface GateRequest {
  /** The authenticated principal, or its id. Never taken from the request body. */
  principal: string | { id: string };
  /** The JSON-RPC method, e.g. `tools/call`. */
  method: string;
  /** The tool or prompt name, or the resource URI. */
  name: string;
  /** The request arguments, validated (bound into the ticket by digest). */
  arguments: Record<string, unknown>;
  /** `io.modelcontextprotocol/clientCapabilities` of this request's `_meta`, as received. */
  capabilities: ClientCapabilities | undefined;
  /** `params.inputResponses` as received (unvalidated). */
  inputResponses: Record<string, unknown> | undefined;
  /** `params.requestState` as received (attacker-controlled). */
  requestState: string | undefined;
  /** The JSON-RPC id of this request (audit records, span attribute `jsonrpc.request.id`). */
  requestId?: string | number | undefined;
  /**
   * The request `_meta` as received. The gate reads `traceparent`,
   * `tracestate` and `baggage` (W3C Trace Context and Baggage; MCP
   * 2026-07-28 `basic/index`, "OpenTelemetry trace context"),
   * `io.modelcontextprotocol/protocolVersion` and, unless `clientInfo` is
   * given, `io.modelcontextprotocol/clientInfo`.
   */
  meta?: Record<string, unknown> | undefined;
  /** `io.modelcontextprotocol/clientInfo` of this request: self-reported, recorded in the audit, never trusted. */
  clientInfo?: Implementation | undefined;
}

/**
 * The question a gate puts to the person. In form mode both members are
 * sent (`elicitation/create`, `mode: "form"`); in URL mode the `message` is
 * sent and the approval page shows it, with the fields of `requestedSchema`
 * that are not consent (see {@link GateSpec.consentFields}).
 */
export interface GateQuestion {
  /** Text shown to the person; say exactly what will happen, to what, and that it cannot be undone. */
  message: string;
  /** The flat form schema (`requestedSchema`). */
  requestedSchema: RequestedSchema;
}

/**
 * How a gated operation must be confirmed: one {@link ConfirmationLevel}, or
 * `form-or-url`: a form where this request's client declared form
 * elicitation, else the approval page where it declared only URL elicitation.
 */
export type LevelPolicy = ConfirmationLevel | 'form-or-url';

/** What the tool found about its target this round, from live data. */
export interface AskContext<View> {
  /** Candidate ids offered in the form, when the person chooses among several. */
  candidates: string[] | undefined;
  /** What the question shows about the target, read from live data (the tool's own shape). */
  view: View;
  /** What a ticket minted for this question seals and hands back (see {@link Preparation}). */
  seal?: Json | undefined;
}

/**
 * What `prepare` returns: the live view a question is built from, or a final
 * result (nothing matched, no access) that ends the round without asking.
 */
export type Preparation<View> =
  | {
      candidates?: string[];
      view: View;
      /**
       * Facts about the target to seal in the ticket minted for this question
       * (small JSON: it travels in every retry), handed back to `prepare` as
       * `sealed` on each retry of that ticket and inside its claim, e.g. a
       * file's identity, so that a replaced target can be refused rather than
       * asked about afresh. Only the server can read or write it.
       */
      seal?: Json;
      result?: undefined;
    }
  | { result: CallToolResult };

/** How the "yes" that lets an operation run was given. */
export type Confirmation =
  /** A client answered the form (`accept`). */
  | { level: 'form' }
  /**
   * The principal approved on the server's page, signed in; `credentialId`
   * names the passkey when the approval was made with one (always at
   * `presence`; at `url` when the person chose to).
   */
  | { level: 'url' | 'presence'; approvalId: string; credentialId?: string };

/**
 * What a signed approval receipt binds, handed to a {@link ReceiptIssuer}
 * when a confirmation lets an operation run.
 */
export interface ReceiptRequest {
  principal: string;
  /** `method:name`, e.g. `tools/call:delete_service`. */
  operation: string;
  /** `sha256:` digest of the RFC 8785 canonical arguments. */
  argumentsDigest: string;
  /** `sha256:` digest of the question as shown. */
  questionDigest: string;
  confirmation: Confirmation;
  /** The ticket nonce claimed for this operation. */
  nonce: string;
  /**
   * `sha256:` digest of the RFC 8785 canonical `content` of the accepted
   * elicitation response (`{}` for an approval on the page): binds the
   * person's choices (flags, typed text), not only the arguments.
   */
  contentDigest: string;
}

/**
 * Signs approval receipts (`@mrtr/receipt`'s `receiptIssuer(signer)`): a
 * compact JWS an executor verifies before it acts.
 */
export interface ReceiptIssuer {
  /**
   * @returns the receipt, a compact JWS.
   * @throws when it cannot be signed; the operation then does not run.
   */
  issue(request: ReceiptRequest): Promise<string>;
}

/** A form answer, validated against the requested schema. */
export type FormContent = Record<string, string | number | boolean | string[]>;

/** What `perform` receives once every check passed, inside the replay store's claim. */
export interface PerformInput<View, Tx> {
  /** The accepted content, validated against the schema, the candidates and `check`. */
  content: FormContent;
  /**
   * The target as read again by `prepare(tx)` inside the claim's transaction,
   * after the gate checked that it still yields the question the person
   * answered.
   */
  view: View;
  /** The live candidates, equal to those the person chose among. */
  candidates: string[] | undefined;
  /** The verified ticket claims (`nonce` is the single-use identity just claimed). */
  claims: TicketClaims;
  /** How the person confirmed. */
  confirmation: Confirmation;
  /** What the replay store hands over: the transaction the claim commits in, when it has one. */
  tx: Tx;
  /** The signed approval receipt of this confirmation, when the gate has a `receipts` issuer. */
  receipt?: string;
}

/**
 * One gated operation, as the low-level {@link ConfirmationGate.run} takes
 * it (the one-declaration `gate.tool()` builds one). `View` is what the
 * question shows about the target; `Tx` the replay store's transaction type.
 */
export interface GateSpec<View, Tx> {
  /** The `inputRequests` key of the question, e.g. `delete_choice`. */
  key: string;
  /** Phase label sealed in the ticket (default `confirm`). */
  phase?: string;
  /**
   * Read the target from live data and decide what to ask: called at round 1,
   * at every retry (a question whose digest changed is asked afresh), and
   * once more inside the replay store's claim with its transaction `tx`
   * (read with it, and lock what will change: `SELECT … FOR UPDATE`), so the
   * mutation acts on what the person saw. Re-authorize here: a result means
   * nothing is asked or done. `sealed` is the `seal` of the preparation that
   * minted the ticket this request presents (`undefined` at round 1, or when
   * none was sealed).
   */
  prepare(tx: Tx | undefined, sealed?: Json): Promise<Preparation<View>>;
  /**
   * Build the question from the live view. Pure: the same view must give the
   * same question, whose digest the ticket seals; a `notice` (why the person
   * is asked again) is shown before it and is not part of the digest.
   */
  question(context: AskContext<View>, notice?: string): GateQuestion;
  /**
   * How the person must confirm (default `form`); a function decides from
   * the live view (e.g. `url` for production services only).
   */
  level?: LevelPolicy | ((context: AskContext<View>) => LevelPolicy);
  /** The form field whose value must be one of the live candidates, if any. */
  candidateField?: string;
  /**
   * Fields that only say yes (a confirm box, a typed name): left out of the
   * approval page in URL mode, where approving is the consent.
   */
  consentFields?: readonly string[];
  /**
   * Whether an accepted, valid form answer gives consent, e.g.
   * `(content) => content.confirm === true`. Required: in form mode `accept`
   * only means the person submitted the form. `false` is treated like
   * `decline`: nothing happens and the ticket is used up. Not consulted for
   * an approval on the page (URL mode), where Approve is the consent.
   */
  consents(content: FormContent, context: AskContext<View>): boolean;
  /**
   * Rules a schema cannot say (a typed name equals the target), for form
   * answers. Return a notice to ask again with the same ticket, or
   * `undefined` to go on. The notice is sent and recorded cut to 1,000
   * UTF-16 code units (`…` at the cut): quote what the person typed as a
   * short preview, or not at all.
   */
  check?(content: FormContent, context: AskContext<View>): string | undefined;
  /**
   * Mutate, inside the replay store's claim (on `tx` when the store hands a
   * transaction). Throw {@link StaleTargetError} when the record changed in a
   * way `prepare` could not see: the claim is released and a fresh question
   * is put.
   */
  perform(input: PerformInput<View, Tx>): Promise<CallToolResult>;
  /** Result for `decline`, a denial on the page, or a non-consenting accept (default: a plain refusal). */
  declined?(context: AskContext<View> | undefined): CallToolResult;
  /** Result for `cancel` (default: says nothing was done). */
  cancelled?(context: AskContext<View> | undefined): CallToolResult;
}

const STALE_TARGET = Symbol.for('@mrtr/gate/StaleTargetError');

/**
 * Thrown from `perform` when the live target no longer matches what the
 * person was shown (gone, moved, renamed, changed). Nothing is mutated and a
 * fresh question is put. Recognised by brand (`instanceof` works across
 * copies of this package).
 */
export class StaleTargetError extends Error {
  override readonly name = 'StaleTargetError';
  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    Object.defineProperty(this, STALE_TARGET, { value: true });
  }

  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && STALE_TARGET in value;
  }
}
