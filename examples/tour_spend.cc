// The README's C++ example: the streaming table `spend` of its SQL tour, written with the C++ API.
// Run in the tour's directory (it reads landing/ and writes ./warehouse/spend_cpp); the README
// shows this file whole and what it prints, and test/readme/check_readme.py checks both.
#include <iostream>

#include "sluice/sluice.h"

sluice::Status Run() {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<sluice::Session> session,
                          sluice::Session::Open({.warehouse = "warehouse"}));
  sluice::DataFrame orders = session->ReadStream()
                                 .Format("files")
                                 .Option("format", "json")
                                 .Schema("user_id STRING, amount BIGINT")
                                 .Load("landing/");
  SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<sluice::StreamingQuery> query,
                          orders.GroupBy({"user_id"})
                              .Agg({"sum(amount) AS total", "count(*) AS orders"})
                              .WriteStream()
                              .OutputMode("complete")
                              .Trigger(sluice::Trigger::AvailableNow())
                              .ToTable("spend_cpp"));
  SLUICE_RETURN_NOT_OK(query->AwaitTermination());
  SLUICE_ASSIGN_OR_RETURN(sluice::Rows rows,
                          session->Sql("SELECT * FROM spend_cpp ORDER BY user_id").Collect());
  std::cout << rows.ToString();
  return sluice::Status::OK();
}

int main() {
  sluice::Status status = Run();
  if (!status.ok()) std::cerr << "Error: " << status.ToString() << "\n";
  return status.ok() ? 0 : 1;
}
