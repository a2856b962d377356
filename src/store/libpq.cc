#include "store/libpq.h"

#include <dlfcn.h>

#include <mutex>
#include <string>
#include <type_traits>

namespace airlock::store {

Result<const LibPq*> libpq() {
  static std::once_flag once;
  static LibPq pq;
  static std::string error;
  std::call_once(once, [] {
    void* h = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      error = std::string("load libpq.so.5 (install libpq5): ") + ::dlerror();
      return;
    }
    bool ok = true;
    auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      if (!fn) ok = false;
    };
    load(pq.connectdb, "PQconnectdb");
    load(pq.status, "PQstatus");
    load(pq.error_message, "PQerrorMessage");
    load(pq.finish, "PQfinish");
    load(pq.reset, "PQreset");
    load(pq.exec, "PQexec");
    load(pq.exec_params, "PQexecParams");
    load(pq.prepare, "PQprepare");
    load(pq.exec_prepared, "PQexecPrepared");
    load(pq.result_status, "PQresultStatus");
    load(pq.result_error_message, "PQresultErrorMessage");
    load(pq.result_error_field, "PQresultErrorField");
    load(pq.clear, "PQclear");
    load(pq.ntuples, "PQntuples");
    load(pq.getvalue, "PQgetvalue");
    load(pq.getlength, "PQgetlength");
    load(pq.getisnull, "PQgetisnull");
    load(pq.cmd_tuples, "PQcmdTuples");
    load(pq.cmd_status, "PQcmdStatus");
    load(pq.transaction_status, "PQtransactionStatus");
    load(pq.set_notice_processor, "PQsetNoticeProcessor");
    load(pq.db, "PQdb");
    load(pq.host, "PQhost");
    load(pq.port, "PQport");
    load(pq.socket, "PQsocket");
    load(pq.consume_input, "PQconsumeInput");
    load(pq.notifies, "PQnotifies");
    load(pq.freemem, "PQfreemem");
    if (!ok) error = "libpq.so.5 lacks a function airlock uses";  // the handle stays open: harmless
  });
  if (!error.empty()) return fail(error);
  return &pq;
}

}  // namespace airlock::store
