// The collective watchdog of watchdog.h. Messages on the side communicator are arrays of int64
// followed by bytes:
//   query  (kQueryTag):  seq, n, ranks[n]                 "where are you relative to #seq over
//   ranks?" answer (kAnswerTag): seq, n, ranks[n] (the query's), entered (the answering rank's last
//                        collective over those ranks, -1 none), active seq (-1 none), m,
//                        active ranks[m], fingerprint length, then the active fingerprint's bytes.
//   failure (kFailureTag):  length, then the bytes of why the sending rank ends the job.
//   confirm (kConfirmTag):  nothing: the failure notice was logged.
#include "kernels/collective/watchdog.h"
#include "kernels/collective/rank_list.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#ifdef OFL_WITH_MPI
#include <mpi.h>
#endif

#include "kernels/log_warning.h"

namespace ofl::kernels::collective {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr auto kAnswerGrace = std::chrono::seconds(1);

struct Answer {
  int64_t entered = -1;
  int64_t active_seq = -1;
  std::vector<int> active_ranks;
  std::string active_fingerprint;
};

// The collective this process is inside, and what the watchdog found out about it.
struct Marked {
  CollectiveId id;
  Clock::time_point since;
  double timeout_s = 0;
  WatchedCollective::Reporter report;
  bool asked = false;
  Clock::time_point asked_at;
  std::map<int, Answer> answers;  // by world rank
  std::string report_text;        // set once reported
};

struct State {
  std::mutex mu;  // everything below
  std::condition_variable cv;
  bool marked_on = false;
  Marked marked;
  std::map<std::vector<int>, int64_t> entered;  // the last collective entered, per rank list
  std::vector<std::string> reports;
  bool running = false;
  bool stop = false;
  // NotifyJobFailure: the notice the watchdog thread is to send, and the confirmations so far.
  bool failure_pending = false;
  std::string failure_why;
  int failure_confirms = 0;
  std::thread thread;
#ifdef OFL_WITH_MPI
  MPI_Comm side = MPI_COMM_NULL;
  int rank = 0;
#endif
};

// Never destroyed: a stream worker may still mark a collective while the process exits.
State& GetState() {
  static State* state = new State();
  return *state;
}

std::string Seconds(Clock::duration d) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", std::chrono::duration<double>(d).count());
  return buf;
}

std::string Describe(const CollectiveId& id) {
  return "collective #" + std::to_string(id.seq) + " over " + Join(id.ranks) + " (" +
         id.fingerprint + ")";
}

std::string ComposeReport(const Marked& m, int me, Clock::time_point now) {
  std::string s =
      "collective watchdog on rank " + std::to_string(me) + ": " + Describe(m.id) + " has waited " +
      Seconds(now - m.since) +
      " s (the hang timeout, OFL_VM_TIMEOUT_SECONDS) and keeps waiting: a collective is not "
      "abandoned while its ranks may still arrive (an NCCL collective that has run this long on "
      "its GPU is aborted).";
  std::vector<std::string> late, mismatched;
  std::vector<int> arrived, silent;
  for (int r : m.id.ranks) {
    if (r == me) continue;
    const auto it = m.answers.find(r);
    if (it == m.answers.end()) {
      silent.push_back(r);
      continue;
    }
    const Answer& a = it->second;
    // Inside a collective with this one's number over these ranks, but not the same collective:
    // the two programs issued different collectives at this point, and MPI pairs them anyway.
    if (a.active_seq == m.id.seq && a.active_ranks == m.id.ranks &&
        a.active_fingerprint != m.id.fingerprint) {
      mismatched.push_back("rank " + std::to_string(r) + " is inside collective #" +
                           std::to_string(a.active_seq) + " over " + Join(a.active_ranks) + " (" +
                           a.active_fingerprint + ") while rank " + std::to_string(me) +
                           " is inside #" + std::to_string(m.id.seq) + " (" + m.id.fingerprint +
                           ")");
      continue;
    }
    if (a.entered >= m.id.seq) {
      arrived.push_back(r);
      continue;
    }
    std::string why = "rank " + std::to_string(r) + " (";
    why += a.entered < 0 ? "it has entered no collective over these ranks"
                         : "its last collective over these ranks is #" + std::to_string(a.entered);
    if (a.active_seq >= 0) {
      why += "; it waits inside collective #" + std::to_string(a.active_seq) + " over " +
             Join(a.active_ranks) + " (" + a.active_fingerprint + ")";
    } else {
      why += "; its collective stream is idle: its program has not issued #" +
             std::to_string(m.id.seq) + " yet, or it waits for the work that produces its input";
    }
    late.push_back(why + ")");
  }
  s += " Not arrived: ";
  if (late.empty()) s += "none";
  for (size_t i = 0; i < late.size(); ++i) s += (i ? "; " : "") + late[i];
  s += ".";
  if (!silent.empty()) {
    s += " No answer within " + Seconds(kAnswerGrace) +
         " s (stuck outside the runtime, or gone): ranks " + Join(silent) + ".";
  }
  if (!mismatched.empty()) {
    s += " Different collectives with the same number: ";
    for (size_t i = 0; i < mismatched.size(); ++i) s += (i ? "; " : "") + mismatched[i];
    s +=
        ". The ranks' programs issued different global ops at this point (out of step); MPI may "
        "pair them into garbage or a hang. The fingerprint check (OFL_CHECK_COLLECTIVES, on unless "
        "set to 0) makes this an error on every rank.";
  }
  if (!arrived.empty()) s += " Arrived: ranks " + Join(arrived) + ".";
  if (late.empty() && silent.empty() && mismatched.empty()) {
    s += " Every rank is inside this collective: the transfer itself is slow or stuck.";
  }
  return s;
}

#ifdef OFL_WITH_MPI
constexpr int kQueryTag = 1;
constexpr int kAnswerTag = 2;
constexpr int kFailureTag = 3;
constexpr int kConfirmTag = 4;

struct Writer {
  std::vector<char> bytes;
  void Int(int64_t v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(v));
    std::memcpy(bytes.data() + at, &v, sizeof(v));
  }
  void Ranks(const std::vector<int>& ranks) {
    Int(static_cast<int64_t>(ranks.size()));
    for (int r : ranks) Int(r);
  }
  void Text(const std::string& t) {
    Int(static_cast<int64_t>(t.size()));
    bytes.insert(bytes.end(), t.begin(), t.end());
  }
};

// Reads what Writer wrote; a short or malformed message reads as zeros and sets `bad`.
struct Reader {
  const std::vector<char>& bytes;
  size_t at = 0;
  bool bad = false;
  int64_t Int() {
    int64_t v = 0;
    if (at + sizeof(v) > bytes.size()) {
      bad = true;
      return 0;
    }
    std::memcpy(&v, bytes.data() + at, sizeof(v));
    at += sizeof(v);
    return v;
  }
  std::vector<int> Ranks() {
    const int64_t n = Int();
    std::vector<int> ranks;
    for (int64_t i = 0; i < n && !bad && n <= 1 << 20; ++i)
      ranks.push_back(static_cast<int>(Int()));
    return ranks;
  }
  std::string Text() {
    const int64_t n = Int();
    if (bad || n < 0 || at + static_cast<size_t>(n) > bytes.size()) {
      bad = true;
      return "";
    }
    std::string t(bytes.data() + at, static_cast<size_t>(n));
    at += static_cast<size_t>(n);
    return t;
  }
};

// Sends in flight; touched by the watchdog thread only (and by StopWatchdog after the join).
std::vector<std::pair<MPI_Request, std::unique_ptr<std::vector<char>>>>& Sends() {
  static auto* sends =
      new std::vector<std::pair<MPI_Request, std::unique_ptr<std::vector<char>>>>();
  return *sends;
}

void Send(std::vector<char> bytes, int to, int tag) {
  State& s = GetState();
  auto buf = std::make_unique<std::vector<char>>(std::move(bytes));
  MPI_Request req = MPI_REQUEST_NULL;
  if (MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, to, tag, s.side, &req) ==
      MPI_SUCCESS) {
    Sends().emplace_back(req, std::move(buf));
  }
}

void TestSends() {
  auto& sends = Sends();
  for (size_t i = 0; i < sends.size();) {
    int done = 0;
    MPI_Test(&sends[i].first, &done, MPI_STATUS_IGNORE);
    if (done) {
      sends.erase(sends.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

void OnQuery(const std::vector<char>& msg, int from) {
  Reader in{msg};
  const int64_t seq = in.Int();
  const std::vector<int> ranks = in.Ranks();
  if (in.bad) return;
  State& s = GetState();
  Writer out;
  out.Int(seq);
  out.Ranks(ranks);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    const auto it = s.entered.find(ranks);
    out.Int(it == s.entered.end() ? -1 : it->second);
    out.Int(s.marked_on ? s.marked.id.seq : -1);
    out.Ranks(s.marked_on ? s.marked.id.ranks : std::vector<int>{});
    out.Text(s.marked_on ? s.marked.id.fingerprint : std::string());
  }
  Send(std::move(out.bytes), from, kAnswerTag);
}

void OnAnswer(const std::vector<char>& msg, int from) {
  Reader in{msg};
  const int64_t seq = in.Int();
  const std::vector<int> ranks = in.Ranks();
  Answer a;
  a.entered = in.Int();
  a.active_seq = in.Int();
  a.active_ranks = in.Ranks();
  a.active_fingerprint = in.Text();
  if (in.bad) return;
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  // An answer to a query about a collective that has since finished is dropped.
  if (s.marked_on && s.marked.asked && s.marked.id.seq == seq && s.marked.id.ranks == ranks) {
    s.marked.answers[from] = std::move(a);
  }
}

// Another rank ends the job: say so on this rank's output (this rank is about to be killed by
// mpiexec, likely inside a collective that waits for the failed rank), then confirm.
void OnFailure(const std::vector<char>& msg, int from) {
  Reader in{msg};
  const std::string why = in.Text();
  const std::string text =
      "rank " + std::to_string(GetState().rank) + ": rank " + std::to_string(from) +
      " ends the job (MPI_Abort): " + (in.bad ? std::string("(no reason received)") : why) +
      "; this rank stops with it";
  LogError(text);
  Send({}, from, kConfirmTag);
}

void OnConfirm() {
  State& s = GetState();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    ++s.failure_confirms;
  }
  s.cv.notify_all();
}

// Sends NotifyJobFailure's notice, from the watchdog thread (which owns the sends).
void SendFailure() {
  State& s = GetState();
  Writer w;
  int size = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.failure_pending) return;
    s.failure_pending = false;
    w.Text(s.failure_why);
  }
  MPI_Comm_size(s.side, &size);
  for (int r = 0; r < size; ++r) {
    if (r != s.rank) Send(w.bytes, r, kFailureTag);
  }
}

void Drain() {
  State& s = GetState();
  for (int n = 0; n < 256; ++n) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, s.side, &flag, &st) != MPI_SUCCESS || !flag) return;
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    std::vector<char> msg(static_cast<size_t>(std::max(bytes, 0)));
    if (MPI_Recv(msg.data(), bytes, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, s.side,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      return;
    }
    if (st.MPI_TAG == kQueryTag) OnQuery(msg, st.MPI_SOURCE);
    if (st.MPI_TAG == kAnswerTag) OnAnswer(msg, st.MPI_SOURCE);
    if (st.MPI_TAG == kFailureTag) OnFailure(msg, st.MPI_SOURCE);
    if (st.MPI_TAG == kConfirmTag) OnConfirm();
  }
}

// Asks the other members of a collective past its timeout where they are; reports once the
// answers are in or the grace period ran out.
void CheckMarked() {
  State& s = GetState();
  std::vector<int> ask;
  std::vector<char> query;
  std::string text;
  WatchedCollective::Reporter report;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.marked_on || !(s.marked.timeout_s > 0) || !s.marked.report_text.empty()) return;
    Marked& m = s.marked;
    const Clock::time_point now = Clock::now();
    if (!m.asked) {
      if (now - m.since < std::chrono::duration<double>(m.timeout_s)) return;
      m.asked = true;
      m.asked_at = now;
      Writer w;
      w.Int(m.id.seq);
      w.Ranks(m.id.ranks);
      query = std::move(w.bytes);
      for (int r : m.id.ranks) {
        if (r != s.rank) ask.push_back(r);
      }
    } else if (m.answers.size() + 1 >= m.id.ranks.size() || now - m.asked_at >= kAnswerGrace) {
      m.report_text = ComposeReport(m, s.rank, now);
      s.reports.push_back(m.report_text);
      text = m.report_text;
      report = m.report;
    }
  }
  for (int r : ask) Send(query, r, kQueryTag);
  if (report) report(text);
}

void Loop() {
  State& s = GetState();
  std::unique_lock<std::mutex> lock(s.mu);
  while (!s.stop) {
    s.cv.wait_for(lock, kPoll, [&] { return s.stop || s.failure_pending; });
    if (s.stop) break;
    lock.unlock();
    SendFailure();
    TestSends();
    Drain();
    CheckMarked();
    lock.lock();
  }
}
#endif  // OFL_WITH_MPI

}  // namespace

WatchedCollective::WatchedCollective(const CollectiveId& id, double timeout_s, Reporter report) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  const auto it = s.entered.emplace(id.ranks, id.seq).first;
  it->second = std::max(it->second, id.seq);
  s.marked_on = true;
  s.marked = Marked{};
  s.marked.id = id;
  s.marked.since = Clock::now();
  s.marked.timeout_s = timeout_s;
  s.marked.report = std::move(report);
}

WatchedCollective::~WatchedCollective() {
  State& s = GetState();
  Marked done;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.marked_on = false;
    done = std::move(s.marked);  // the reporter is destroyed outside the lock
    s.marked = Marked{};
  }
}

std::string WatchdogStatus(const CollectiveId& id) {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.marked_on || s.marked.id.seq != id.seq || s.marked.id.ranks != id.ranks) return "";
  if (!s.marked.report_text.empty()) return s.marked.report_text;
  std::string t =
      "inside " + Describe(s.marked.id) + " for " + Seconds(Clock::now() - s.marked.since) + " s";
  if (s.marked.asked) t += "; the watchdog asked the other ranks where they are";
  return t;
}

std::vector<std::string> WatchdogReports() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.reports;
}

bool WatchdogRunning() {
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.running;
}

void NotifyJobFailure(const std::string& why, double grace_s) {
#ifdef OFL_WITH_MPI
  State& s = GetState();
  std::unique_lock<std::mutex> lock(s.mu);
  if (!s.running) return;
  int size = 1;
  MPI_Comm_size(s.side, &size);
  s.failure_why = why;
  s.failure_confirms = 0;
  s.failure_pending = true;
  s.cv.notify_all();
  s.cv.wait_for(lock, std::chrono::duration<double>(grace_s),
                [&] { return s.failure_confirms >= size - 1 || s.stop; });
#else
  (void)why;
  (void)grace_s;
#endif
}

void StartWatchdog() {
#ifdef OFL_WITH_MPI
  State& s = GetState();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.running) return;
  }
  int size = 1;
  int provided = MPI_THREAD_SINGLE;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Query_thread(&provided);
  // With one process nobody can be late; below MPI_THREAD_MULTIPLE the thread could not probe
  // while a collective runs.
  if (size < 2 || provided < MPI_THREAD_MULTIPLE) return;
  MPI_Comm side = MPI_COMM_NULL;
  if (MPI_Comm_dup(MPI_COMM_WORLD, &side) != MPI_SUCCESS) return;
  MPI_Comm_set_errhandler(side, MPI_ERRORS_RETURN);
  int rank = 0;
  MPI_Comm_rank(side, &rank);
  std::lock_guard<std::mutex> lock(s.mu);
  s.side = side;
  s.rank = rank;
  s.stop = false;
  s.running = true;
  s.thread = std::thread(Loop);
#endif
}

void StopWatchdog() {
#ifdef OFL_WITH_MPI
  State& s = GetState();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.running) return;
    s.stop = true;
  }
  s.cv.notify_all();
  s.thread.join();
  Drain();
  // Answers are a few dozen bytes: they leave at once. One still in flight after this is freed
  // (MPI completes it on its own), its buffer kept.
  for (int i = 0; i < 100 && !Sends().empty(); ++i) {
    TestSends();
    if (!Sends().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& send : Sends()) {
    MPI_Request_free(&send.first);
    (void)send.second.release();  // MPI may still read it
  }
  Sends().clear();
  MPI_Comm_free(&s.side);
  std::lock_guard<std::mutex> lock(s.mu);
  s.side = MPI_COMM_NULL;
  s.running = false;
#endif
}

}  // namespace ofl::kernels::collective
