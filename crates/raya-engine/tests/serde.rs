//! Serde types across the boundary (feature `serde`).
#![cfg(feature = "serde")]

use raya_engine::embed::serde::{from_value, to_value};
use raya_engine::embed::Serde;
use raya_engine::{HostError, HostValue, Vm};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Job {
    id: u32,
    name: String,
    tags: Vec<String>,
    priority: Option<f64>,
    kind: Kind,
}

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
enum Kind {
    Batch,
    Urgent { deadline: u64 },
}

#[test]
fn serde_types_cross_as_script_objects() {
    let vm = Vm::builder().workers(1).build();
    vm.register_fn("nextJob", |id: u32| {
        Ok::<_, String>(Serde(Job {
            id,
            name: format!("job {id}"),
            tags: vec!["a".into()],
            priority: None,
            kind: Kind::Urgent { deadline: 99 },
        }))
    });
    vm.register_fn("submit", |Serde(job): Serde<Job>| Ok::<_, String>(format!("{} ({:?})", job.name, job.kind)));
    let p = vm
        .compile_source(
            "s.raya",
            r#"
            export function roundTrip(): any[] {
              const j = nextJob(7);
              const fixed = { ...j, tags: [...j.tags, "b"], priority: 2.5, kind: "Batch" };
              let bad = "";
              try { submit({ id: -1 } as any); } catch (e) { bad = (e as Error).name; }
              return [j.name, j.kind.Urgent.deadline, j.priority, submit(fixed), bad, fixed];
            }
            "#,
        )
        .unwrap();
    let inst = vm.load(&p).unwrap();
    let r = inst.call::<HostValue>("roundTrip", ()).unwrap();
    let HostValue::Array(items) = r else { panic!("{r:?}") };
    assert_eq!(items[0], HostValue::from("job 7"));
    assert_eq!(items[1], HostValue::Number(99.0));
    assert_eq!(items[2], HostValue::Null);
    assert_eq!(items[3], HostValue::from("job 7 (Batch)"));
    assert_eq!(items[4], HostValue::from("TypeError"));
    let back: Job = from_value(items[5].clone()).unwrap();
    assert_eq!(
        back,
        Job { id: 7, name: "job 7".into(), tags: vec!["a".into(), "b".into()], priority: Some(2.5), kind: Kind::Batch }
    );
    // Calls take and return them too.
    let job = Job { id: 1, name: "x".into(), tags: vec![], priority: Some(1.0), kind: Kind::Batch };
    assert_eq!(to_value(&job).unwrap().get("name"), Some(&HostValue::from("x")));
    let p = vm.compile_source("e.raya", "export function echo(j: any): any { return j; }").unwrap();
    let inst = vm.load(&p).unwrap();
    assert_eq!(inst.call::<Serde<Job>>("echo", (Serde(job.clone()),)), Ok(Serde(job)));
    assert!(matches!(from_value::<Job>(HostValue::Number(1.0)), Err(HostError::Conversion(_))));
}
