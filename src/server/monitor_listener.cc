#include "server/monitor_listener.h"

#include "common/clock.h"

namespace sluice::server {

int64_t SystemNowMs() { return WallClockMs(); }

void MonitorListener::OnQueryStarted(const stream::QueryStartedEvent& event) {
  store_->OnStarted(event.id, event.run_id, event.name, now_ms_());
}

void MonitorListener::OnQueryProgress(const stream::QueryProgressEvent& event) {
  store_->OnProgress(event.progress, now_ms_());
}

void MonitorListener::OnQueryIdle(const stream::QueryIdleEvent& event) {
  store_->OnIdle(event.id, event.run_id);
}

void MonitorListener::OnQueryTerminated(const stream::QueryTerminatedEvent& event) {
  store_->OnTerminated(event.id, event.run_id, event.exception);
}

}  // namespace sluice::server
