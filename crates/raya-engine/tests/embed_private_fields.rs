//! A class instance handed to the host shows its properties, never its
//! private fields (`#x`), as in every other listing of an object's keys.

use raya_engine::{HostValue, Vm};
use std::sync::{Arc, Mutex};

#[test]
fn private_fields_do_not_reach_the_host() {
    let vm = Vm::builder().workers(1).build();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    vm.register_raw_fn("report", move |args: &[HostValue]| {
        s.lock().unwrap().push(args.first().cloned().unwrap_or_default());
        Ok(HostValue::Undefined)
    });
    let program = vm
        .compile_source(
            "test.raya",
            r#"
            class Account {
              #balance = 10;
              owner = "ann";
              get balance() { return this.#balance; }
            }
            report(new Account());
            "#,
        )
        .expect("compiles");
    vm.execute(&program).expect("runs");
    let seen = seen.lock().unwrap();
    assert_eq!(*seen, vec![HostValue::Object(vec![("owner".into(), "ann".into())])]);
}
