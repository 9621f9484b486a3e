/**
 * Core's contract suites of the ports added with evaluations, ratings, outbound events and the
 * sandbox runners, against the SQL store, on PGlite and PostgreSQL.
 */
import {
  EvalRunRepoContract,
  FeedbackRepoContract,
  OutboundEventRepoContract,
  RunnerRepoContract,
  WebhookEndpointRepoContract
} from "@sightline/core/testing"
import { runOnBothDatabases } from "./utils/databases.js"

runOnBothDatabases((name, layer) => RunnerRepoContract.runnerRepoContract(name, layer))
runOnBothDatabases((name, layer) => WebhookEndpointRepoContract.webhookEndpointRepoContract(name, layer))
runOnBothDatabases((name, layer) => OutboundEventRepoContract.outboundEventRepoContract(name, layer))
runOnBothDatabases((name, layer) => FeedbackRepoContract.feedbackRepoContract(name, layer))
runOnBothDatabases((name, layer) => EvalRunRepoContract.evalRunRepoContract(name, layer))
