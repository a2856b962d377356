// libpq, loaded with dlopen when a store first connects to PostgreSQL
// (store/postgres.h says why), shared by the connection (postgres.cc) and the
// notifier (notifier.cc). Only libpq's header is needed to build.
#pragma once

#include <libpq-fe.h>

#include "base/result.h"

namespace airlock::store {

// The libpq functions the store calls, resolved once from libpq.so.5.
struct LibPq {
  decltype(&::PQconnectdb) connectdb;
  decltype(&::PQstatus) status;
  decltype(&::PQerrorMessage) error_message;
  decltype(&::PQfinish) finish;
  decltype(&::PQreset) reset;
  decltype(&::PQexec) exec;
  decltype(&::PQexecParams) exec_params;
  decltype(&::PQprepare) prepare;
  decltype(&::PQexecPrepared) exec_prepared;
  decltype(&::PQresultStatus) result_status;
  decltype(&::PQresultErrorMessage) result_error_message;
  decltype(&::PQresultErrorField) result_error_field;
  decltype(&::PQclear) clear;
  decltype(&::PQntuples) ntuples;
  decltype(&::PQgetvalue) getvalue;
  decltype(&::PQgetlength) getlength;
  decltype(&::PQgetisnull) getisnull;
  decltype(&::PQcmdTuples) cmd_tuples;
  decltype(&::PQcmdStatus) cmd_status;
  decltype(&::PQtransactionStatus) transaction_status;
  decltype(&::PQsetNoticeProcessor) set_notice_processor;
  decltype(&::PQdb) db;
  decltype(&::PQhost) host;
  decltype(&::PQport) port;
  // The notifier's (store/notifier.cc).
  decltype(&::PQsocket) socket;
  decltype(&::PQconsumeInput) consume_input;
  decltype(&::PQnotifies) notifies;
  decltype(&::PQfreemem) freemem;
};

// Loads libpq.so.5 once; fails, saying what to install, when it cannot.
Result<const LibPq*> libpq();

}  // namespace airlock::store
